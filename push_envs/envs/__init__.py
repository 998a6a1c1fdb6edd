"""The pushing tasks: batched core, task classes, rendering and teleop."""
