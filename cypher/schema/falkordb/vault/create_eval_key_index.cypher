// name: create_eval_key_index
// mode: write
// params:
// In the vault graph: ingest and the benchmark read an evaluation by eval_key (without it,
// every lookup scanned the label and bulk ingest grew quadratically with the tasks).
CREATE INDEX FOR (e:EvalRecord) ON (e.eval_key)
