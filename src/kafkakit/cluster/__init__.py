"""Operations on a running cluster: its state read and brought to what is declared, the roll's decisions."""
