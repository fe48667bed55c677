# expect: failed
# why: socket is not importable (refused when compiled)
import socket
socket.create_connection(("127.0.0.1", {{PORT}})).sendall(b"leak")
n = int(input())
print(sum(map(int, input().split())))
