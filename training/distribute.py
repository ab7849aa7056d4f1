"""The tf.distribute strategy named by ``config.train.distribution``."""

from __future__ import annotations

import os

import tensorflow as tf


def make_strategy(distribution: str, tpu_address: str = "") -> tf.distribute.Strategy:
    """Returns the strategy for ``"default" | "mirrored" | "multi_worker" | "tpu"``.

    ``multi_worker`` reads the cluster from the ``TF_CONFIG`` environment variable, as
    ``tf.distribute.MultiWorkerMirroredStrategy`` does; ``tpu`` connects to ``tpu_address`` (a
    Cloud TPU name, ``grpc://host:port``, ``"local"`` for a TPU VM's own; ``""``: ``TPU_NAME``).

    Example:
        >>> strategy = make_strategy("mirrored")   # all local GPUs (or the CPU)
    """
    if distribution == "default":
        return tf.distribute.get_strategy()
    if distribution == "mirrored":
        return tf.distribute.MirroredStrategy()
    if distribution == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise ValueError(
                "train.distribution='multi_worker' needs the TF_CONFIG environment variable "
                '(e.g. {"cluster": {"worker": ["host1:port", "host2:port"]}, '
                '"task": {"type": "worker", "index": 0}}) on every worker.'
            )
        return tf.distribute.MultiWorkerMirroredStrategy()
    if distribution == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(f"unknown train.distribution {distribution!r}.")


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes checkpoints, logs and summaries (chief, worker 0, or alone)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or resolver.task_type in (None, "chief"):
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return resolver.task_type == "worker" and resolver.task_id == 0 and not has_chief


def worker_index_and_count(strategy: tf.distribute.Strategy) -> tuple[int, int]:
    """This worker's index among all workers (the chief first), and the number of workers."""
    resolver = getattr(strategy, "cluster_resolver", None)
    cluster = resolver.cluster_spec().as_dict() if resolver is not None else {}
    chiefs, workers = len(cluster.get("chief", [])), len(cluster.get("worker", []))
    if chiefs + workers <= 1:
        return 0, 1
    index = 0 if resolver.task_type == "chief" else chiefs + resolver.task_id
    return index, chiefs + workers


def split_for_replicas(strategy: tf.distribute.Strategy, batch: dict) -> tuple:
    """``strategy.run`` arguments giving each local replica its share of ``batch``'s rows.

    Batches come from a plain, checkpointable iterator (the distributed ones cannot be
    checkpointed); with one local replica the batch is passed as it is.
    """
    worker_index, num_workers = worker_index_and_count(strategy)
    local_replicas = strategy.num_replicas_in_sync // num_workers
    if local_replicas == 1:
        return (batch,)
    first_replica = worker_index * local_replicas

    def share(context: tf.distribute.experimental.ValueContext) -> dict:
        local = context.replica_id_in_sync_group - first_replica
        rows = tf.shape(next(iter(batch.values())))[0]  # every value has a row an example
        per_replica = (rows + local_replicas - 1) // local_replicas
        return {
            key: value[local * per_replica : (local + 1) * per_replica]
            for key, value in batch.items()
        }

    return (strategy.experimental_distribute_values_from_function(share),)
