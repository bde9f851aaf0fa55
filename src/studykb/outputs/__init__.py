"""Front-end formats built from query results: graph exports, sidebars, plans."""
