"""A datasource URL's options (``?sslmode=require``): each database's are given to its driver
(TLS asked for is TLS or an error, never a connection in clear), any other is an error."""

from __future__ import annotations

import re

import pytest
from conftest import MYSQL_URL, POSTGRESQL_URL

from sqlml.cli import main
from sqlml.datasources import connect, parse_url
from sqlml.datasources.mysql import options as mysql_options
from sqlml.datasources.url import redacted
from sqlml.errors import DatasourceError

ACCEPTED = {
    "postgresql": "sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c.pem&sslkey=/k.pem"
    "&connect_timeout=3&application_name=app&options=-c%20search_path%3Dx"
    "&target_session_attrs=read-write",
    "mysql": "ssl=true&ssl_ca=/ca.pem&ssl_cert=/c.pem&ssl_key=/k.pem&ssl_verify_cert=true"
    "&ssl_verify_identity=false&connect_timeout=3&read_timeout=60&write_timeout=60",
}


@pytest.mark.parametrize("scheme", sorted(ACCEPTED))
def test_each_servers_options_are_kept_in_order(scheme):
    url = parse_url(f"{scheme}://u:pw@h/db?{ACCEPTED[scheme]}")
    assert (
        "&".join(f"{name}={value}" for name, value in url.options).split("&")[:2]
        == (ACCEPTED[scheme].split("&")[:2])
    )
    assert parse_url(url.with_password()) == url  # as a step's environment hands it on
    assert str(url).startswith(f"{scheme}://u:***@h/db?{ACCEPTED[scheme][:20]}")


@pytest.mark.parametrize(
    ("text", "named", "known"),
    [
        ("postgresql://u:SECRET@h/db?ssl=true", "'ssl'", "sslmode, sslrootcert"),
        ("postgres://u@h/db?sslmode=require&host=evil", "'host'", "sslmode"),
        ("mysql://u:SECRET@h/db?sslmode=require", "'sslmode'", "ssl, ssl_ca"),
        ("mysql://u@h/db?charset=latin1", "'charset'", "ssl_verify_identity"),
        ("duckdb:///file.duckdb?access_mode=read_only", "'access_mode'", "no options"),
        ("sqlite:///file.db?mode=ro", "'mode'", "no options"),
    ],
)
def test_an_unknown_option_is_an_error_naming_it_and_the_known_ones(text, named, known):
    with pytest.raises(DatasourceError) as raised:
        parse_url(text)
    assert f"sqlml does not know the option {named}" in raised.value.message
    assert known in raised.value.hint
    assert "SECRET" not in raised.value.message + raised.value.hint


def test_an_option_given_twice_or_unreadable_is_an_error():
    with pytest.raises(DatasourceError, match="option 'sslmode' is given twice"):
        parse_url("postgresql://u@h/db?sslmode=require&sslmode=disable")
    with pytest.raises(DatasourceError, match=r"options .* cannot be read"):
        parse_url("mysql://u@h/db?ssl")


def test_secret_options_are_never_shown():
    text = "postgresql://u:PW@h/db?sslkey=/k.pem&sslpassword=KEYPW"
    url = parse_url(text)
    assert "KEYPW" not in str(url) + repr(url) and "sslpassword=***" in str(url)
    assert "KEYPW" in url.with_password()
    assert "KEYPW" not in redacted(text) and "PW" not in redacted(text).replace("sslpassword", "")
    shown = redacted("mysql://u@h/db?ssl_key_password=KEYPW&ssl=true")
    assert shown == "mysql://u@h/db?ssl_key_password=***&ssl=true"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ("ssl=maybe", "option ssl is 'maybe', not true or false"),
        ("connect_timeout=soon", "option connect_timeout is 'soon', not a whole number"),
        ("ssl=false&ssl_ca=/ca.pem", "ssl=false and ssl_* options contradict each other"),
    ],
)
def test_a_mysql_options_bad_value_is_an_error(options, said):
    with pytest.raises(DatasourceError, match=re.escape(said)):
        mysql_options.connect_arguments(parse_url(f"mysql://u@h/db?{options}"))


def test_postgresql_sslmode_require_refuses_a_server_without_tls():
    server = connect(POSTGRESQL_URL)  # the test server has no TLS
    server.close()
    with pytest.raises(DatasourceError) as raised:
        connect(f"{POSTGRESQL_URL}?sslmode=require")
    assert "server does not support SSL, but SSL was required" in raised.value.message
    assert "the server offers no TLS" in raised.value.hint


def test_postgresql_options_reach_the_driver():
    ds = connect(f"{POSTGRESQL_URL}?sslmode=disable&application_name=sqlml-test")
    try:
        found = ds.execute("SELECT current_setting('application_name')")
        assert found.rows == [("sqlml-test",)]
    finally:
        ds.close()


@pytest.mark.parametrize(
    "options", ["ssl=true", "ssl=true&ssl_verify_cert=true", "ssl_verify_identity=true"]
)
def test_mysql_tls_refuses_a_server_without_tls(options):
    connect(MYSQL_URL).close()  # the test server has no TLS
    with pytest.raises(DatasourceError) as raised:
        connect(f"{MYSQL_URL}?{options}")
    assert raised.value.message.startswith("cannot connect to")
    assert "enable TLS on the server" in raised.value.hint


def test_mysql_tls_asked_yet_not_made_is_an_error(monkeypatch):
    """Should the driver fall back to a connection in clear (pymysql before 1.1.1 did), the
    connection is closed and refused."""
    monkeypatch.setattr(mysql_options, "wants_tls", lambda url: True)
    monkeypatch.setattr(mysql_options, "connect_arguments", lambda url: {})
    with pytest.raises(DatasourceError, match="the server offers no TLS"):
        connect(f"{MYSQL_URL}?connect_timeout=5")


def test_mysql_options_reach_the_driver():
    ds = connect(f"{MYSQL_URL}?ssl=false&read_timeout=7")
    try:
        assert ds._con._read_timeout == 7
        assert not ds.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'").rows[0][1]
    finally:
        ds.close()


@pytest.mark.parametrize(
    "url", [f"{POSTGRESQL_URL}?sslmode=require", f"{MYSQL_URL}?ssl=true", f"{MYSQL_URL}?tls=1"]
)
def test_a_run_asking_for_tls_of_a_server_without_it_is_one_error(url, tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text("CREATE TABLE never_made_by_tls AS SELECT 1 AS x;\n")
    assert main(["run", str(program), "--datasource", url]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err, err
    for plain in (MYSQL_URL, POSTGRESQL_URL):
        ds = connect(plain)
        try:
            assert not ds.table_exists(["never_made_by_tls"])
        finally:
            ds.close()
