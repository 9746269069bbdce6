"""Model providers: LiteLLM over HTTP (the product), and a scripted double for tests."""
