# expect: timeout
# why: never ends: the step's wall limit ends the worker
while True:
    pass
