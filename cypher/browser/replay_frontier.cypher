// name: replay_frontier
// mode: read
// params: task_id, finished_statuses
// The answer-relevant replay frontier of the latest finished run: the steps it replays and
// the answer-relevant nodes, with every dependency into them. Inputs with frontier = true are
// kept context the replay reads as it is (preserved steps, untouched memories, user inputs).
MATCH (t:Task)
WHERE t.task_id = $task_id AND t.task_key STARTS WITH '~'
MATCH (r:RepairRun {task_key: t.task_key})
WHERE r.status IN $finished_statuses
WITH r
ORDER BY r.created DESC, r.run_id DESC
LIMIT 1
MATCH (r)-[m]->(v:Node)
WHERE type(m) IN ['REPLAY', 'ANSWER_RELEVANT']
WITH collect(DISTINCT v) AS replayed
UNWIND replayed AS v
OPTIONAL MATCH (p:Node)-[e]->(v)
WHERE type(e) <> 'CHAIN' AND @recorded(p)
RETURN p, e, v, NOT p IN replayed AS frontier
