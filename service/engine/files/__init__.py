"""Files the engine reads and writes: confined, checked reads (reading.py), and writes that
replace only the service's own output (writing.py).

The lowest layer of the engine beside errors.py: imports nothing of the project but
service.engine.errors.
"""
