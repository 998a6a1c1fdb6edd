"""The pushing family: one robot (CoopPush-v0: two) pushes one object to a goal.

``family.py`` is the family's library (observation layout, progress reward, info columns,
spawns); each sub-folder is one task: PushBox-v0, WallSlide-v0, PushT-v0, PushMaze-v1,
CoopPush-v0.
"""
