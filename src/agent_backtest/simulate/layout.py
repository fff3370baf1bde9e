"""The files of a simulate run directory, named in one place so that every stage agrees.

run.json              the manifest: target, roles, flows file and sha256, status
flows.jsonl           the flows selected (and generated), as played
conversations.jsonl   one conversation a line, appended as each ends
sessions.jsonl        the same conversations as canonical sessions
judging.json          what decides the verdicts: judges, rubric, owners, tools, checks
verdicts.jsonl        one verdict a line, checkpointed after each judged conversation
summary.json          pass rates with their intervals, written when judging ends
report.html           the page of transcripts and verdicts
ledger.md             the run's failures grouped by family, owner and category
coverage.json         seeds judged and pending, per family
fixture.sqlite        the snapshot of a --fixture-db, while the run isolates flows
agent_sessions.jsonl  the agent's own traces of the conversations (abt simulate traces)
"""

MANIFEST = "run.json"
FLOWS = "flows.jsonl"
CONVERSATIONS = "conversations.jsonl"
SESSIONS = "sessions.jsonl"
JUDGING = "judging.json"
VERDICTS = "verdicts.jsonl"
SUMMARY = "summary.json"
PAGE = "report.html"
LEDGER = "ledger.md"
COVERAGE = "coverage.json"
FIXTURE_COPY = "fixture.sqlite"
AGENT_SESSIONS = "agent_sessions.jsonl"
