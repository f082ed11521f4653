// name: create_task_constraint
// mode: write
// params:
CREATE CONSTRAINT task_task_key IF NOT EXISTS FOR (t:Task) REQUIRE t.task_key IS UNIQUE
