"""Validate a capspec tools.gemini.json with Google's own SDK types.

    python validate_gemini.py <tools.gemini.json>

Each entry must be a google.genai.types.FunctionDeclaration (pydantic,
extra keys forbidden), and together they must form a types.Tool. Prints
"<n> declarations valid" and exits 0, or prints the first error and exits 1.
A known-bad declaration (a type array) must be refused, so a validator that
accepts anything fails this script too.
"""
import json
import sys

from google.genai import types

declarations = json.load(open(sys.argv[1], encoding="utf-8"))
try:
    parsed = [types.FunctionDeclaration.model_validate(d) for d in declarations]
    types.Tool(function_declarations=parsed)
except Exception as error:  # pydantic.ValidationError and friends
    print(f"invalid: {error}")
    sys.exit(1)
try:
    types.FunctionDeclaration.model_validate({"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}})
except Exception:
    print(f"{len(parsed)} declarations valid")
    sys.exit(0)
print("the SDK accepted a type array; it is not validating")
sys.exit(1)
