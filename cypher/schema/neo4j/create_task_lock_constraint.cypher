// name: create_task_lock_constraint
// mode: write
// params:
CREATE CONSTRAINT task_lock_key IF NOT EXISTS FOR (l:TaskLock) REQUIRE l.task_key IS UNIQUE
