// Command loadgen is the reference harness's load generator (bench/compare.ts, issue 13 item 1):
// a franz-go client, lighter than Kafka's Java ProducerPerformance and ConsumerPerformance, so that
// at peak the broker and not the client is the bottleneck. Both brokers get the same client
// settings (linger, batch size, buffered records), given on the command line.
//
//	loadgen produce -brokers 127.0.0.1:9092 -topic t -records 500000 -record-size 1024 -acks all [-rate 20000]
//	loadgen consume -brokers 127.0.0.1:9092 -topic t -records 500000 [-partitions 1]
//	loadgen create -brokers 127.0.0.1:9092 -topic t [-partitions 1] [-rf 1] [-config k=v,k=v]
//
// Each run prints one JSON line on stdout (see produceResult and consumeResult) and exits 0, or
// prints the error on stderr and exits 1 (a record that fails to produce fails the run).
//
// Latency of a produced record: from the Produce call to its promise (the broker's answer), as
// ProducerPerformance measures it, so a peak run's latency includes the time a record waited in
// the client's buffer; fixed-rate runs (-rate) are the ones to read latency from.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/time/rate"
)

// produceResult is the JSON line of a produce run. Latencies in milliseconds.
type produceResult struct {
	Mode          string  `json:"mode"`
	Records       int     `json:"records"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
	TargetRate    int     `json:"targetRate"`
	AvgMs         float64 `json:"avgMs"`
	P50Ms         float64 `json:"p50Ms"`
	P99Ms         float64 `json:"p99Ms"`
	P999Ms        float64 `json:"p999Ms"`
	MaxMs         float64 `json:"maxMs"`
}

// consumeResult is the JSON line of a consume run: Seconds runs from the first fetch to the last
// record wanted (no group: partitions are assigned, so no join time).
type consumeResult struct {
	Mode          string  `json:"mode"`
	Records       int     `json:"records"`
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
}

// mb is the megabyte of ProducerPerformance's MB/sec (1024 * 1024 bytes).
const mb = 1024 * 1024

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: loadgen produce|consume [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "produce":
		err = produce(os.Args[2:])
	case "consume":
		err = consume(os.Args[2:])
	case "create":
		err = create(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: produce or consume", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

func produce(args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	topic := fs.String("topic", "", "topic")
	partition := fs.Int("partition", 0, "partition every record goes to")
	records := fs.Int("records", 100000, "records to send")
	recordSize := fs.Int("record-size", 1024, "value bytes per record (no key)")
	acks := fs.String("acks", "1", "1 or all")
	rateFlag := fs.Int("rate", 0, "records per second; 0 sends as fast as the broker takes them")
	lingerMs := fs.Int("linger-ms", 0, "producer linger in ms (franz-go's default is 0)")
	batchBytes := fs.Int("batch-bytes", 1048576, "max record batch bytes (ProducerBatchMaxBytes)")
	buffered := fs.Int("max-buffered", 10000, "max records buffered in the client (MaxBufferedRecords)")
	timeoutS := fs.Int("timeout-s", 180, "give up after this many seconds")
	_ = fs.Parse(args)
	if *topic == "" {
		return errors.New("-topic is required")
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(*brokers, ",")...),
		kgo.DefaultProduceTopic(*topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(time.Duration(*lingerMs) * time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(*batchBytes)),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(*buffered),
		kgo.ClientID("skiff-loadgen"),
	}
	switch *acks {
	case "all", "-1":
		// Idempotent, as the Java producer is by default with acks=all.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		// Idempotence needs acks=all; the Java producer turns it off for acks=1 too.
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		return fmt.Errorf("-acks %q: 1 or all", *acks)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeoutS)*time.Second)
	defer cancel()
	// Connect and load metadata before the clock starts, as ProducerPerformance's first send does.
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}

	var limiter *rate.Limiter
	if *rateFlag > 0 {
		// A burst of 10 ms worth of records: a timer on a loaded host wakes late by a millisecond or
		// more, and a smaller bucket would lose the tokens of the late wake and send below the rate.
		burst := *rateFlag / 100
		if burst < 1 {
			burst = 1
		}
		limiter = rate.NewLimiter(rate.Limit(*rateFlag), burst)
	}
	value := make([]byte, *recordSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	latencies := make([]time.Duration, *records)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	wg.Add(*records)
	start := time.Now()
	for i := 0; i < *records; i++ {
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				return fmt.Errorf("after %d records: %w", i, err)
			}
		}
		idx := i
		sent := time.Now()
		r := &kgo.Record{Value: value, Partition: int32(*partition)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			latencies[idx] = time.Since(sent)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("record %d: %w", idx, err)
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return firstErr
	}
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	var sum time.Duration
	for _, l := range latencies {
		sum += l
	}
	bytes := int64(*records) * int64(*recordSize)
	return emit(produceResult{
		Mode:          "produce",
		Records:       *records,
		Bytes:         bytes,
		Seconds:       elapsed.Seconds(),
		RecordsPerSec: float64(*records) / elapsed.Seconds(),
		MBPerSec:      float64(bytes) / mb / elapsed.Seconds(),
		TargetRate:    *rateFlag,
		AvgMs:         ms(sum / time.Duration(len(latencies))),
		P50Ms:         ms(quantile(latencies, 0.50)),
		P99Ms:         ms(quantile(latencies, 0.99)),
		P999Ms:        ms(quantile(latencies, 0.999)),
		MaxMs:         ms(latencies[len(latencies)-1]),
	})
}

func consume(args []string) error {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	topic := fs.String("topic", "", "topic")
	partitions := fs.Int("partitions", 1, "read partitions 0..n-1 from the start, by assignment")
	records := fs.Int("records", 100000, "records to read")
	partitionBytes := fs.Int("partition-bytes", 1048576, "max bytes per partition per fetch (max.partition.fetch.bytes)")
	timeoutS := fs.Int("timeout-s", 180, "give up after this many seconds")
	_ = fs.Parse(args)
	if *topic == "" {
		return errors.New("-topic is required")
	}
	assigned := map[int32]kgo.Offset{}
	for p := 0; p < *partitions; p++ {
		assigned[int32(p)] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(*brokers, ",")...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{*topic: assigned}),
		kgo.FetchMaxPartitionBytes(int32(*partitionBytes)),
		kgo.ClientID("skiff-loadgen"),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeoutS)*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	var (
		n     int
		bytes int64
	)
	start := time.Now()
	for n < *records {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("after %d of %d records: %w", n, *records, err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("fetch %s-%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			bytes += int64(len(r.Key) + len(r.Value))
		})
	}
	elapsed := time.Since(start)
	return emit(consumeResult{
		Mode:          "consume",
		Records:       n,
		Bytes:         bytes,
		Seconds:       elapsed.Seconds(),
		RecordsPerSec: float64(n) / elapsed.Seconds(),
		MBPerSec:      float64(bytes) / mb / elapsed.Seconds(),
	})
}

// create makes a topic with a CreateTopics request (no JVM start per topic, as TopicCommand has)
// and prints {"mode":"create","topic":...}; an existing topic is an error.
func create(args []string) error {
	fs := flag.NewFlagSet("create", flag.ExitOnError)
	brokers := fs.String("brokers", "127.0.0.1:9092", "bootstrap brokers, comma-separated")
	topic := fs.String("topic", "", "topic")
	partitions := fs.Int("partitions", 1, "partition count")
	rf := fs.Int("rf", 1, "replication factor")
	configs := fs.String("config", "", "topic configs, k=v comma-separated")
	_ = fs.Parse(args)
	if *topic == "" {
		return errors.New("-topic is required")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...), kgo.ClientID("skiff-loadgen"))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = *topic
	t.NumPartitions = int32(*partitions)
	t.ReplicationFactor = int16(*rf)
	if *configs != "" {
		for _, kv := range strings.Split(*configs, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("-config %q: k=v", kv)
			}
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name = k
			c.Value = kmsg.StringPtr(v)
			t.Configs = append(t.Configs, c)
		}
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			msg := ""
			if rt.ErrorMessage != nil {
				msg = ": " + *rt.ErrorMessage
			}
			return fmt.Errorf("create %s: %w%s", rt.Topic, err, msg)
		}
	}
	return emit(map[string]string{"mode": "create", "topic": *topic})
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func emit(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}
