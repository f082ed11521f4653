// name: scan_eval_records
// mode: read
// params:
// `provrepair db check` on the vault: phase 1 of cypher/check/scan_labels.cypher for its one label.
MATCH (n:EvalRecord)
RETURN 'EvalRecord' AS label, count(n) AS scanned,
       sum(CASE WHEN 'EvalRecord' IN labels(n) THEN 0 ELSE 1 END) AS stray
