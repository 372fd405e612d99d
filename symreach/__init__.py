"""symreach: can a pod type ever reach a node? A symbolic model checker for Kubernetes scheduling."""

__version__ = "0.1.0"
