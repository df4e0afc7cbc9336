"""Outbound HTTP shared by every client: the retry policy and polite public-source access."""
