"""The many-object family: one robot among several movable bodies.

``family.py`` is the family's library (the body list from the arguments, the robot head,
spawns that keep bodies apart, progress terms); each sub-folder is one task: PushMulti-v0,
PushClutter-v0, Sweep-v1.
"""
