"""IR plumbing shared by every dialect and tool: text I/O, locations, weight resources."""
