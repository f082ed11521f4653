// name: create_eval_record_constraint
// mode: write
// params:
CREATE CONSTRAINT eval_record_key IF NOT EXISTS FOR (e:EvalRecord) REQUIRE e.eval_key IS UNIQUE
