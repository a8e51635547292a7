"""Small leaf utilities: paths, atomic files, JSON without json, tasks, logging."""
