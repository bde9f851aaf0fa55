"""Text analysis shared by search and related documents: cutting Chinese into words
(the only package that imports rjieba), stemming English, stop words."""
