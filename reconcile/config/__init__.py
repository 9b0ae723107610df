"""Settings: built once per invocation from the config file, the environment and the flags, validated at
load, then handed down as frozen values. Nothing below the command line reads the environment."""
