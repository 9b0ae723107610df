from reconcile.cli.commands import main


def test_version_prints_the_package_version(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith("kube-rehash 0.")
