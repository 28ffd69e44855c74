"""Where a Delta lake lives and what reaches delta-rs: a folder or s3://bucket/prefix; S3 settings from the
environment, with conditional put forced on and the unsafe modes refused; a missing variable named, and no secret in
any repr, str or error text."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from dialogbench.lake.delta import DeltaCellStore, DeltaStoreError, Location, MissingSetting, RefusedSetting
from dialogbench.lake.delta.location import s3_options
from tests.lake.delta.conftest import ACCESS_KEY, SECRET_KEY

ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "eu-west-3"}


def test_a_location_is_a_folder_or_a_bucket_prefix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    local = Location.parse("lake")
    assert (local.kind, local.root) == ("local", str(tmp_path / "lake"))
    assert local.table_uri("cells") == str(tmp_path / "lake" / "cells")
    assert Location.parse(f"file://{tmp_path}/x").root == str(tmp_path / "x")
    s3 = Location.parse("s3://my-bucket/some/prefix/")
    assert (s3.kind, s3.bucket, s3.prefix, str(s3)) == ("s3", "my-bucket", "some/prefix", "s3://my-bucket/some/prefix")
    assert s3.table_uri("cells") == "s3://my-bucket/some/prefix/cells"
    assert Location.parse("s3://my-bucket").table_uri("t") == "s3://my-bucket/t"
    for bad in ("", "gs://b/x", "s3://B_ad/x", "s3:///x"):
        with pytest.raises(ValueError):
            Location.parse(bad)
    for table in ("", "_state", ".hidden", "a/b", "..", "x" * 129):
        with pytest.raises(ValueError, match="table name"):
            s3.table_uri(table)


def test_s3_options_come_from_the_environment_with_conditional_put_on():
    options = s3_options(location="s3://b/p", environ={**ENV, "AWS_ENDPOINT_URL": "http://127.0.0.1:9000"})
    assert options.as_dict() == {**ENV, "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true",
                                 "AWS_CONDITIONAL_PUT": "etag", "AWS_S3_ALLOW_UNSAFE_RENAME": "false"}
    aws = s3_options(location="s3://b/p", environ={**ENV, "AWS_REGION": "", "AWS_DEFAULT_REGION": "us-west-2",
                                                   "AWS_SESSION_TOKEN": "tok"})
    assert aws["AWS_REGION"] == "us-west-2" and aws["AWS_SESSION_TOKEN"] == "tok" and "AWS_ENDPOINT_URL" not in aws
    no_region = {k: v for k, v in ENV.items() if k != "AWS_REGION"}
    assert s3_options(location="s3://b", environ={**no_region, "AWS_ENDPOINT_URL": "https://minio:9000"}
                      )["AWS_REGION"] == "us-east-1"  # an S3-compatible store: any region
    given = s3_options(location="s3://b", environ={}, overrides={**ENV, "timeout": "30s"})
    assert given["TIMEOUT"] == "30s" and given["AWS_CONDITIONAL_PUT"] == "etag"


@pytest.mark.parametrize("missing, named", [("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"),
                                            ("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
                                            ("AWS_REGION", "AWS_REGION (or AWS_DEFAULT_REGION)")])
def test_a_missing_variable_is_named_and_no_secret_is_shown(missing, named):
    env = {k: v for k, v in ENV.items() if k != missing}
    with pytest.raises(MissingSetting) as caught:
        DeltaCellStore("s3://bucket/lake", environ=env)
    text = str(caught.value)
    assert named in text and "s3://bucket/lake" in text
    assert ACCESS_KEY not in text and SECRET_KEY not in text


@pytest.mark.parametrize("setting", [{"AWS_S3_ALLOW_UNSAFE_RENAME": "true"}, {"AWS_S3_LOCKING_PROVIDER": "dynamodb"},
                                     {"AWS_CONDITIONAL_PUT": "disabled"}])
def test_settings_that_make_concurrent_writers_unsafe_are_refused(setting):
    (name, _), = setting.items()
    with pytest.raises(RefusedSetting, match=name):
        s3_options(location="s3://b", environ={**ENV, **setting})
    with pytest.raises(RefusedSetting, match=name):
        s3_options(location="s3://b", environ=ENV, overrides=setting)


def test_credentials_in_the_url_are_refused_without_quoting_them():
    for url in (f"s3://{ACCESS_KEY}:{SECRET_KEY}@bucket/x", f"s3://bucket/x?X-Amz-Signature={SECRET_KEY}"):
        with pytest.raises(RefusedSetting) as caught:
            Location.parse(url)
        assert SECRET_KEY not in str(caught.value) and ACCESS_KEY not in str(caught.value)
    with pytest.raises(RefusedSetting) as caught:
        s3_options(location="s3://b", environ={**ENV, "AWS_ENDPOINT_URL": f"http://u:{SECRET_KEY}@minio:9000"})
    assert SECRET_KEY not in str(caught.value)


def test_no_secret_in_a_repr_a_str_or_a_pickle_of_the_location():
    store = DeltaCellStore("s3://bucket/lake", environ={**ENV, "AWS_SESSION_TOKEN": "session-token-value-123"})
    shown = " ".join([repr(store), str(store), repr(store.options), str(store.options), repr(store.location),
                      str(store.location)])
    for secret in (ACCESS_KEY, SECRET_KEY, "session-token-value-123"):
        assert secret not in shown
    assert "AWS_SECRET_ACCESS_KEY" in repr(store.options) and "eu-west-3" in repr(store.options)
    assert SECRET_KEY.encode() not in pickle.dumps(store.location)
    assert store.options.scrub(f"denied for {SECRET_KEY} and {ACCESS_KEY}") == "denied for *** and ***"


def test_a_store_error_on_s3_names_the_location_and_table_and_no_secret(s3_env):
    store = DeltaCellStore(s3_env + "/lake")
    with pytest.raises(DeltaStoreError) as missing:
        store.read("cells")
    gone = DeltaCellStore("s3://no-such-bucket-here/lake")  # the server answers NoSuchBucket
    with pytest.raises(DeltaStoreError) as failed:
        gone.insert_missing("cells", pa.table({"k": [1]}), keys=["k"])
    for caught, where in ((missing, f"{s3_env}/lake/cells"), (failed, "s3://no-such-bucket-here/lake/cells")):
        text = str(caught.value)
        assert where in text, text
        assert SECRET_KEY not in text and ACCESS_KEY not in text, text
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
