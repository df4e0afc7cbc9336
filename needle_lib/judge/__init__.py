"""LLM relevance judge: Needs Met (0–4) ratings of search results, cached on disk.

Nothing is re-exported here: modules that need one piece (the verdict types, the judge's
identity in a report) must not pull the judge, the query profile and with them the
engines and asyncio into a recall run's start-up.
"""
