// Package kafkabridge moves records between seglog and a Kafka-protocol
// cluster (Apache Kafka, Redpanda, ...), with franz-go as the client.
//
// It owns how to reach the cluster (Conn: brokers, TLS, SASL, timeouts, and
// errors explained in one line), what the cluster says of a topic, Export
// (logstore partitions into a Kafka topic: a reader per partition, the
// bounded queue of records in flight, acknowledgement accounting, follow
// mode, stall detection) and Import (a Kafka topic into logstore writers,
// with where each partition starts and when its position is saved). The
// import position file itself is logstore's, which owns every file of the
// data directory and writes them all through its durable, fault-testable
// file system.
//
// It never prints: what a caller shows comes back as values (Summary),
// callbacks (progress, positions) and warnings as func(string). Of the
// module it may import only logstore, and it imports neither the
// command-line, table nor progress-bar libraries: flags, output and exit
// statuses are the commands package's. Its messages may still name the
// 'seglog kafka' flag that changes an outcome, as logstore's name the
// command that repairs one.
package kafkabridge
