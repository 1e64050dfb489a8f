"""pategan_audit: reproduce "The Elusive Pursuit of Reproducing PATE-GAN" (TMLR 2025)."""
__version__ = "0.1.0"
