"""Guards of destructive operations: when a deletion, a removal or a CA change may go ahead."""
