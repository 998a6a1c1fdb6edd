"""The observation table shared by every task's docstring."""

STATE_TABLE = """
    ``obs_mode="state"``: a flat float32 Box. With ``M = max_contacts`` (default 4):

    | index | quantity | unit |
    |---|---|---|
    | 0, 1 | robot origin x, y (world) | m |
    | 2, 3 | cos, sin of the robot heading | - |
    | 4, 5 | robot velocity vx, vy (world, clipped to +-20) | m/s |
    | 6 | robot yaw rate (clipped to +-50) | rad/s |
    | 7, 8 | object origin relative to the robot, in the robot frame | m |
    | 9, 10 | cos, sin of the object heading relative to the robot | - |
    | 11, 12 | goal minus object position (world) | m |
    | 13, 14 | cos, sin of the goal heading relative to the object | - |
    | 15, 16 | goal x, y (world) | m |
    | 17, 18 | cos, sin of the goal heading | - |
    | 19, 20 | object velocity vx, vy (world, clipped to +-20) | m/s |
    | 21 + 6j | robot contact slot j < M (largest force first): in_contact (0/1) | - |
    | 22 + 6j, 23 + 6j | its normal, from the other body toward the robot (robot frame) | - |
    | 24 + 6j | its force / robot traction (clipped to 10) | - |
    | 25 + 6j, 26 + 6j | its point relative to the robot (robot frame) | m |
    | 21 + 6M | object touches the wall (WallSlide) or any immovable body (0/1) | - |
    | 22 + 6M, 23 + 6M | net contact force on the object (world) / traction, within +-10 | - |
    | 24 + 6M | object touches the robot (0/1) | - |
    | 25 + 6M, 26 + 6M | goal relative to the robot origin, in the robot frame | m |
    | 27 + 6M, 28 + 6M | goal minus object position, in the robot frame | m |

    The robot traction is its mu * m * g [N]. ``obs_mode="goal"``: a Dict with
    ``observation`` (the vector above), ``achieved_goal`` and ``desired_goal``; there the
    step reward is exactly ``compute_reward(achieved_goal, desired_goal, info)`` (what HER
    relabels with): sparse 0 / -1, dense minus the distance [m] (PushT: minus 0.2 x the
    heading error [rad] too) plus the success bonus.
"""
