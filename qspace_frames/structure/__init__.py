"""Document structure: which lines are headings (`headings`), the page-preserving section tree
of each document (`tree`), and how far two versions of one document agree on it (`agreement`)."""
