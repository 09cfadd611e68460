# exit: 1
# message: op.py defines no class Model(nn.Module)
