"""What a pass tells the world: the report (rows and summary), metrics and logs."""
