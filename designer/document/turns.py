"""Deferring UI-thread work to a later turn of the event loop."""

# A 1 ms timer rather than a zero timer: Qt delivers every queued zero-timer call in one pass, so
# a chain of 0 ms slices would run back to back; timers let input and paint events in between.
NEXT_TURN_MS = 1
