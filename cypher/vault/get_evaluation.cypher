// name: get_evaluation
// mode: read
// params: eval_key
MATCH (e:EvalRecord {eval_key: $eval_key})
RETURN e.evaluation_json AS evaluation_json, e.fault_types_json AS fault_types_json
