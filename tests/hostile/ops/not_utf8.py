# exit: 1
# message: the op file is not UTF-8
ÿþ = 1
