"""Full-text search in Chinese and English (the only package that imports whoosh)."""
