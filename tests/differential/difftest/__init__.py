"""cudnnfe's differential tester: seeded random graphs written once against cudnn-frontend's
Python API, run on cudnnfe and NVIDIA's cudnn-frontend, compared with each other and with NumPy
references (tests/differential/README.md)."""
