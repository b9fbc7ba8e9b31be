"""The version of jaxtests, on the ground floor: modules below the package's face import it here."""

__version__ = "0.1.0"
