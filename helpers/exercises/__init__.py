"""Self-checks for the lessons' exercises, one module per lesson; they print in both languages."""
