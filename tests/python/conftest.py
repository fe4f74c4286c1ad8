import lwcorpus


def pytest_report_header(config):
    return lwcorpus.describe()
