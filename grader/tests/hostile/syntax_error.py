"""expect: points=0 state=broken problem=SyntaxError"""


def add(a, b)
    return a + b


def scale(x, k=2):
    return x * k
