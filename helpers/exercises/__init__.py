"""Self-checks for the lessons' exercises, one module per lesson, in the notebook's language."""
