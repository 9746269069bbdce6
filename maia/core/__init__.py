"""The core: contracts, errors, paths, settings, storage, signals, inert text, globs (over i18n only)."""
