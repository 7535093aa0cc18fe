"""Layer 6: the HTTP prediction daemon (an optional extra: pip install 'perfport[serve]')."""
