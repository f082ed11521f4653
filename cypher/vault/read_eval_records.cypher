// name: read_eval_records
// mode: read
// params:
// `provrepair db check` on the vault: phase 2, every evaluation record's attributes read.
MATCH (n:EvalRecord)
RETURN 'EvalRecord' AS label, count(properties(n)) AS read
