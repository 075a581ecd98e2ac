package cluster

import "net"

// freePort picks a port on 127.0.0.1 for a node to publish. Ports are pinned
// rather than left to Docker ("0"), because Docker gives a restarted container
// new numbers and clients would lose the node.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
