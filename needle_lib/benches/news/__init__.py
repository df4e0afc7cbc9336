"""news: fresh, time-sensitive queries from live RSS feeds and Google Trends (``generate``);
judged like every judged bench (pooled nDCG@5)."""
