"""What the app looks like, shared by the canvas and the windows: Qt-free tables both read."""
