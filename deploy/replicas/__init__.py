"""N replicas of this checkout's server behind HAProxy on one machine (scripts/replicas).

`supervisor` starts them and the proxy (deploy/haproxy/haproxy.cfg), restarts a replica that
dies, reloads them one at a time on SIGHUP and stops everything on SIGTERM or SIGINT;
`__main__` is its command line. It imports nothing of the service: the replicas are processes.
"""
