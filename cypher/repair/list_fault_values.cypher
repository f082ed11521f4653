// name: list_fault_values
// mode: read
// params: uids
// What each diagnosed fault states (content and structured fact) and its agent id, for the
// echo sweep (repair/plan/echo.py; it keeps the order of the faults itself).
UNWIND $uids AS u
MATCH (f:Node {uid: u})
RETURN f.id AS id, f.uid AS uid, f.content AS content, f.entity_id AS entity_id,
       f.fact_key AS fact_key, f.fact_value AS fact_value, f.record_id AS record_id
