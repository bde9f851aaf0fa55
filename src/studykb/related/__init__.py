"""Related documents, the sidebar and topic pages: an explainable blend of links,
shared topics and text."""
